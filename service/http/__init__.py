"""HTTP layer: routes, the fast move path, request parsing, schemas, errors, CORS, docs."""
