"""Test harness internals shared by the test suite (not public API)."""
