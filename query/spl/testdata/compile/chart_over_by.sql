-- * | chart count OVER status BY host
-- result: statistics
-- column: status
-- column: db1
-- column: web1
-- column: web2
-- column: NULL
-- stage: search | *
-- stage: chart | count OVER status BY host

-- resolved before compiling the rest:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`status` AS `@status`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT CAST(`@status` AS Nullable(String)) AS c1, `@status` AS c2, nullIf(`@host`, '') AS c3 FROM s0 WHERE (CAST(`@status` AS Nullable(String)) IS NOT NULL))
SELECT toUInt8(c3 IS NULL) AS is_null, CAST(c3 AS Nullable(String)) AS value, if(c3 IS NULL, toFloat64(sum(n)), toFloat64(coalesce(sum(score), 0))) AS score FROM (SELECT c1, c3, count() AS score, count() AS n FROM s1 GROUP BY c1, c3) GROUP BY c3 ORDER BY is_null ASC, score DESC, value ASC LIMIT 11 BY is_null

-- main:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`status` AS `@status`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT CAST(`@status` AS Nullable(String)) AS c1, `@status` AS c2, nullIf(`@host`, '') AS c3 FROM s0 WHERE (CAST(`@status` AS Nullable(String)) IS NOT NULL)),
  s2 AS (SELECT c1 AS c4, any(c2) AS c5, countIf(c3 = 'db1') AS c6, countIf(c3 = 'web1') AS c7, countIf(c3 = 'web2') AS c8, countIf(c3 IS NULL) AS c9 FROM s1 GROUP BY c4)
SELECT toJSONString(c5) AS o1, c6 AS o2, c7 AS o3, c8 AS o4, c9 AS o5 FROM s2 ORDER BY (c4 IS NULL) ASC, (toFloat64OrNull(c4) IS NULL) ASC, toFloat64OrNull(c4) ASC, c4 ASC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`status` AS `@status`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT CAST(`@status` AS Nullable(String)) AS c1, `@status` AS c2, nullIf(`@host`, '') AS c3 FROM s0 WHERE (CAST(`@status` AS Nullable(String)) IS NOT NULL)),
  s2 AS (SELECT c1 AS c4, any(c2) AS c5, countIf(c3 = 'db1') AS c6, countIf(c3 = 'web1') AS c7, countIf(c3 = 'web2') AS c8, countIf(c3 IS NULL) AS c9 FROM s1 GROUP BY c4)
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s2 LIMIT 10001)) AS n1
