SELECT digest FROM tributary.schema_definitions
