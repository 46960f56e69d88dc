"""Lodge arena: a client of the public HTTP contract, bots for every game,
and a tournament harness (``lodge-arena``).  Nothing here imports the
engine or the service: everything goes over HTTP."""
