"""A module that fails to import: a collection error."""

raise ImportError("this test module cannot be imported")


def test_never_collected():
    pass
