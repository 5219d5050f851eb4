"""A small, fast mutation campaign (``make mutants``): plausible one-line bugs planted, one at
a time, in a scratch copy of the repository; the tests that should catch each are run there.
A mutant the tests do not fail on *survived*: a place where users would be hurt and nobody
would notice. See docs/testing.md."""
