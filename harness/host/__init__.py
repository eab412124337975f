"""The host wing: what this machine is (GPUs, driver, the interpreter's torch) and which build fits it (doctor)."""
