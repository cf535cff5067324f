-- * | stats count(eval(status>=500)) AS errors, count AS total | eval rate=errors/total*100
-- result: statistics
-- column: errors
-- column: total
-- column: rate
-- stage: search | *
-- stage: stats | count(eval(status>=500)) AS errors, count AS total
-- stage: eval | rate=errors/total*100

-- main:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`status` AS `@status` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT countIf(if(toFloat64OrNull(CAST(`@status` AS Nullable(String))) IS NOT NULL AND 500.0 IS NOT NULL, toFloat64OrNull(CAST(`@status` AS Nullable(String))) >= 500.0, CAST(`@status` AS Nullable(String)) >= toString(500.0))) AS c1, count() AS c2, count() AS c3 FROM s0),
  s2 AS (SELECT *, (if(c2 = 0, NULL, c1 / c2) * 100.0) AS c4 FROM s1)
SELECT c1 AS o1, c2 AS o2, c4 AS o3 FROM s2 LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`status` AS `@status` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT countIf(if(toFloat64OrNull(CAST(`@status` AS Nullable(String))) IS NOT NULL AND 500.0 IS NOT NULL, toFloat64OrNull(CAST(`@status` AS Nullable(String))) >= 500.0, CAST(`@status` AS Nullable(String)) >= toString(500.0))) AS c1, count() AS c2, count() AS c3 FROM s0),
  s2 AS (SELECT *, (if(c2 = 0, NULL, c1 / c2) * 100.0) AS c4 FROM s1)
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s1 LIMIT 10001)) AS n1, (SELECT count() FROM (SELECT 1 FROM s2 LIMIT 10001)) AS n2
