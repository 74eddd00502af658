"""Peers: what a user would otherwise assemble with another framework, built here so that
saksi's own pipeline can be measured side by side with it (bench/peer_retrieval.py)."""
