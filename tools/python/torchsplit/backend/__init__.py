"""``torchsplit new-backend``: a new device backend from a template, names checked."""
