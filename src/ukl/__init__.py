"""Unikernel Linux (UKL) tooling: fetch, patch, build, link, boot and measure."""
