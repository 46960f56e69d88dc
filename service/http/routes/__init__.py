"""HTTP resources: one module per area, one MethodView per resource."""
