"""Store layer: Redis keys and Lua scripts, the store, its client, caches and notifications."""
