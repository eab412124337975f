"""The provenance wing: who vouches for a cell. A statement over the cell's canonical content
(statement.py), signed with an ed25519 key in a DSSE envelope (keys.py, dsse.py) or keyless with
Sigstore in GitHub Actions (sigstore_bundle.py), checked offline against trust.toml (trust.py) by
verify.py; a cell and its statement travel as one archive (submission.py, oci.py). See
docs/provenance.md."""
