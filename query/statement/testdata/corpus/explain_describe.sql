-- case explain
EXPLAIN SELECT count() FROM events WHERE event = 'click'
-- case explain_plan_indexes
EXPLAIN PLAN indexes = 1 SELECT count() FROM events WHERE event = 'click'
-- case explain_pipeline
EXPLAIN PIPELINE SELECT count() FROM events
-- case explain_syntax
EXPLAIN SYNTAX SELECT user.id FROM events WHERE 1 = 1
-- case explain_ast
EXPLAIN AST SELECT 1
-- case explain_query_tree
EXPLAIN QUERY TREE SELECT region, count() FROM events GROUP BY region
-- case explain_estimate
EXPLAIN ESTIMATE SELECT * FROM events WHERE region = 'eu'
-- case describe
DESCRIBE events
-- case describe_table
DESCRIBE TABLE analytics.daily
-- case desc
DESC users
-- case describe_query
DESCRIBE (SELECT user.id AS uid, count() AS c FROM events GROUP BY uid)
-- case describe_function
DESCRIBE TABLE generateRandom('a Int64, b String')
