SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus')
