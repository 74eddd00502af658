"""In-process implementations of the stage Protocols."""
