"""Tests in two tiers: tests/fast (no kernel, no guest; seconds) and tests/boot
(builds kernels and boots guests; boot/conftest.py marks them `boot`)."""
