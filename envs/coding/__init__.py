"""Coding environments: write, test and attack code, run only inside parlour.sandbox."""
