"""``torchsplit affected``: the CI pipelines a change selects, from the build graph."""
