-- case tables
SELECT name, total_rows, total_bytes FROM system.tables WHERE database = 'default'
-- case databases
SELECT name FROM system.databases
-- case columns
SELECT table, name, type FROM system.columns WHERE database = 'default'
-- case parts
SELECT table, generation, count() AS parts, sum(rows) FROM system.parts WHERE active GROUP BY table, generation
-- case workloads
SELECT name, parent, create_query FROM system.workloads
-- case resources
SELECT * FROM system.resources
-- case scheduler
SELECT resource, path, dequeued_requests FROM system.scheduler
-- case functions
SELECT name FROM system.functions WHERE name LIKE 'array%'
-- case one
SELECT dummy FROM system.one
-- case numbers
SELECT number FROM system.numbers LIMIT 10
-- case processes
SELECT query_id, elapsed FROM system.processes
-- case query_log
SELECT query, query_duration_ms FROM system.query_log ORDER BY event_time DESC LIMIT 10
-- case settings
SELECT name, value FROM system.settings WHERE changed
-- case show_tables
SHOW TABLES
-- case show_databases
SHOW DATABASES
