"""Ray Serve hosting of the pipeline (one deployment per model, composed with handles).

Not built yet: the Ray Serve application is tracked as its own issue. The package exists
so the distribution layout is fixed; `pipeline/` never imports it.
"""
