"""saksi's cite-or-refuse engine as a plain Python library (never imports ray)."""

__version__ = "0.1.0"
