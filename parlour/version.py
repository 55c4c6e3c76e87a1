"""parlour's release version, in a module of its own so that every layer can name it without importing the whole package."""

__version__ = "0.1.0"
