-- * | chart limit=top2 useother=true avg(bytes) BY status host
-- result: statistics
-- column: status
-- column: web1
-- column: web2
-- column: NULL
-- column: OTHER
-- stage: search | *
-- stage: chart | limit=top2 useother=true avg(bytes) BY status host

-- resolved before compiling the rest:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`bytes` AS `@bytes`, doc.`status` AS `@status`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT CAST(`@status` AS Nullable(String)) AS c1, `@status` AS c2, nullIf(`@host`, '') AS c3, `@bytes` AS c4 FROM s0 WHERE (CAST(`@status` AS Nullable(String)) IS NOT NULL))
SELECT toUInt8(c3 IS NULL) AS is_null, CAST(c3 AS Nullable(String)) AS value, if(c3 IS NULL, toFloat64(sum(n)), toFloat64(coalesce(sum(score), 0))) AS score FROM (SELECT c1, c3, avg(toNullable(toFloat64(toFloat64OrNull(CAST(c4 AS Nullable(String)))))) AS score, count() AS n FROM s1 GROUP BY c1, c3) GROUP BY c3 ORDER BY is_null ASC, score DESC, value ASC LIMIT 3 BY is_null

-- main:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`bytes` AS `@bytes`, doc.`status` AS `@status`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT CAST(`@status` AS Nullable(String)) AS c1, `@status` AS c2, nullIf(`@host`, '') AS c3, `@bytes` AS c4 FROM s0 WHERE (CAST(`@status` AS Nullable(String)) IS NOT NULL)),
  s2 AS (SELECT c1 AS c5, any(c2) AS c6, avgIf(toNullable(toFloat64(toFloat64OrNull(CAST(c4 AS Nullable(String))))), c3 = 'web1') AS c7, avgIf(toNullable(toFloat64(toFloat64OrNull(CAST(c4 AS Nullable(String))))), c3 = 'web2') AS c8, avgIf(toNullable(toFloat64(toFloat64OrNull(CAST(c4 AS Nullable(String))))), c3 IS NULL) AS c9, avgIf(toNullable(toFloat64(toFloat64OrNull(CAST(c4 AS Nullable(String))))), c3 IS NOT NULL AND c3 NOT IN ('web1', 'web2')) AS c10 FROM s1 GROUP BY c5)
SELECT toJSONString(c6) AS o1, c7 AS o2, c8 AS o3, c9 AS o4, c10 AS o5 FROM s2 ORDER BY (c5 IS NULL) ASC, (toFloat64OrNull(c5) IS NULL) ASC, toFloat64OrNull(c5) ASC, c5 ASC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`bytes` AS `@bytes`, doc.`status` AS `@status`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT CAST(`@status` AS Nullable(String)) AS c1, `@status` AS c2, nullIf(`@host`, '') AS c3, `@bytes` AS c4 FROM s0 WHERE (CAST(`@status` AS Nullable(String)) IS NOT NULL)),
  s2 AS (SELECT c1 AS c5, any(c2) AS c6, avgIf(toNullable(toFloat64(toFloat64OrNull(CAST(c4 AS Nullable(String))))), c3 = 'web1') AS c7, avgIf(toNullable(toFloat64(toFloat64OrNull(CAST(c4 AS Nullable(String))))), c3 = 'web2') AS c8, avgIf(toNullable(toFloat64(toFloat64OrNull(CAST(c4 AS Nullable(String))))), c3 IS NULL) AS c9, avgIf(toNullable(toFloat64(toFloat64OrNull(CAST(c4 AS Nullable(String))))), c3 IS NOT NULL AND c3 NOT IN ('web1', 'web2')) AS c10 FROM s1 GROUP BY c5)
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s2 LIMIT 10001)) AS n1
