"""What a `bazel test` run did, from its build event log: per target, whether it ran or
came from a cache and how long it took; test cases counted from the test.xml files."""
