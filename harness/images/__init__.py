"""The images wing: what a cell runs in. Backend image recipes and their build through the Docker SDK,
push and prune, the air-gapped wheelhouse, the library check and torch verification baked into every
image, the engine and one container's lifetime; and the wheels read from the package indexes (upstream, api-diff)."""
