"""Ray Serve and Ray Data hosting of the pipeline: one deployment per model, the retriever that
owns the data directory, the HTTP API, batch answering and bulk ingestion. `pipeline/` never
imports it."""
