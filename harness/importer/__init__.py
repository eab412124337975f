"""The importer wing: a cell written from another CI's JUnit (`harness import`), a producer beside run."""
