-- * | timechart bins=24 cont=false max(bytes) BY host
-- result: statistics
-- column: _time
-- column: db1
-- column: web1
-- column: web2
-- column: NULL
-- stage: search | *
-- stage: timechart | bins=24 cont=false max(bytes) BY host

-- resolved before compiling the rest:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`bytes` AS `@bytes`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT toStartOfInterval(`@_time`, toIntervalMillisecond(3600000)) AS c1, nullIf(`@host`, '') AS c2, `@bytes` AS c3 FROM s0)
SELECT toUInt8(c2 IS NULL) AS is_null, CAST(c2 AS Nullable(String)) AS value, if(c2 IS NULL, toFloat64(sum(n)), toFloat64(coalesce(sum(score), 0))) AS score FROM (SELECT c1, c2, toFloat64OrNull(CAST(if(countIf((toFloat64OrNull(CAST(c3 AS Nullable(String))) IS NOT NULL)) > 0, CAST(max(toFloat64OrNull(CAST(c3 AS Nullable(String)))) AS Dynamic), CAST(max(CAST(c3 AS Nullable(String))) AS Dynamic)) AS Nullable(String))) AS score, count() AS n FROM s1 GROUP BY c1, c2) GROUP BY c2 ORDER BY is_null ASC, score DESC, value ASC LIMIT 11 BY is_null

-- main:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`bytes` AS `@bytes`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT toStartOfInterval(`@_time`, toIntervalMillisecond(3600000)) AS c1, nullIf(`@host`, '') AS c2, `@bytes` AS c3 FROM s0),
  s2 AS (SELECT c1 AS c4, if(countIf((toFloat64OrNull(CAST(c3 AS Nullable(String))) IS NOT NULL) AND c2 = 'db1') > 0, CAST(maxIf(toFloat64OrNull(CAST(c3 AS Nullable(String))), c2 = 'db1') AS Dynamic), CAST(maxIf(CAST(c3 AS Nullable(String)), c2 = 'db1') AS Dynamic)) AS c5, if(countIf((toFloat64OrNull(CAST(c3 AS Nullable(String))) IS NOT NULL) AND c2 = 'web1') > 0, CAST(maxIf(toFloat64OrNull(CAST(c3 AS Nullable(String))), c2 = 'web1') AS Dynamic), CAST(maxIf(CAST(c3 AS Nullable(String)), c2 = 'web1') AS Dynamic)) AS c6, if(countIf((toFloat64OrNull(CAST(c3 AS Nullable(String))) IS NOT NULL) AND c2 = 'web2') > 0, CAST(maxIf(toFloat64OrNull(CAST(c3 AS Nullable(String))), c2 = 'web2') AS Dynamic), CAST(maxIf(CAST(c3 AS Nullable(String)), c2 = 'web2') AS Dynamic)) AS c7, if(countIf((toFloat64OrNull(CAST(c3 AS Nullable(String))) IS NOT NULL) AND c2 IS NULL) > 0, CAST(maxIf(toFloat64OrNull(CAST(c3 AS Nullable(String))), c2 IS NULL) AS Dynamic), CAST(maxIf(CAST(c3 AS Nullable(String)), c2 IS NULL) AS Dynamic)) AS c8 FROM s1 GROUP BY c4)
SELECT c4 AS o1, toJSONString(c5) AS o2, toJSONString(c6) AS o3, toJSONString(c7) AS o4, toJSONString(c8) AS o5 FROM s2 ORDER BY (c4 IS NULL) ASC, c4 ASC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`bytes` AS `@bytes`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT toStartOfInterval(`@_time`, toIntervalMillisecond(3600000)) AS c1, nullIf(`@host`, '') AS c2, `@bytes` AS c3 FROM s0),
  s2 AS (SELECT c1 AS c4, if(countIf((toFloat64OrNull(CAST(c3 AS Nullable(String))) IS NOT NULL) AND c2 = 'db1') > 0, CAST(maxIf(toFloat64OrNull(CAST(c3 AS Nullable(String))), c2 = 'db1') AS Dynamic), CAST(maxIf(CAST(c3 AS Nullable(String)), c2 = 'db1') AS Dynamic)) AS c5, if(countIf((toFloat64OrNull(CAST(c3 AS Nullable(String))) IS NOT NULL) AND c2 = 'web1') > 0, CAST(maxIf(toFloat64OrNull(CAST(c3 AS Nullable(String))), c2 = 'web1') AS Dynamic), CAST(maxIf(CAST(c3 AS Nullable(String)), c2 = 'web1') AS Dynamic)) AS c6, if(countIf((toFloat64OrNull(CAST(c3 AS Nullable(String))) IS NOT NULL) AND c2 = 'web2') > 0, CAST(maxIf(toFloat64OrNull(CAST(c3 AS Nullable(String))), c2 = 'web2') AS Dynamic), CAST(maxIf(CAST(c3 AS Nullable(String)), c2 = 'web2') AS Dynamic)) AS c7, if(countIf((toFloat64OrNull(CAST(c3 AS Nullable(String))) IS NOT NULL) AND c2 IS NULL) > 0, CAST(maxIf(toFloat64OrNull(CAST(c3 AS Nullable(String))), c2 IS NULL) AS Dynamic), CAST(maxIf(CAST(c3 AS Nullable(String)), c2 IS NULL) AS Dynamic)) AS c8 FROM s1 GROUP BY c4)
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s2 LIMIT 10001)) AS n1
