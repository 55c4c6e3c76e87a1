"""parlour's environments: the core protocol and its faces, the registry, and the games."""
