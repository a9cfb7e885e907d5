-- Which of the group roles exist, as one comma-separated text ('' for none):
-- recorded with the definitions, so that a role created later gets its
-- privileges from the next migrate.
SELECT coalesce(string_agg(r, ',' ORDER BY r), '')
  FROM unnest(ARRAY['tributary_admin', 'tributary_console', 'tributary_consumer', 'tributary_loader', 'tributary_maintainer',
                     'tributary_publisher',
                     'tributary_receiver']) r
 WHERE to_regrole(r) IS NOT NULL
