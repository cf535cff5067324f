-- * | stats count, count(bytes) AS nb, dc(status), sum(bytes), avg(bytes), min(bytes), max(status), values(host), earliest(status), latest(status) BY host, index
-- result: statistics
-- column: host
-- column: index
-- column: count
-- column: nb
-- column: dc(status)
-- column: sum(bytes)
-- column: avg(bytes)
-- column: min(bytes)
-- column: max(status)
-- column: values(host)
-- column: earliest(status)
-- column: latest(status)
-- stage: search | *
-- stage: stats | count, count(bytes) AS nb, dc(status), sum(bytes), avg(bytes), min(bytes), max(status), values(host), earliest(status), latest(status) BY host, index

-- main:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`bytes` AS `@bytes`, doc.`status` AS `@status`, doc.`host` AS `@host`, doc.`index` AS `@index` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT nullIf(`@host`, '') AS c1, nullIf(`@index`, '') AS c2, count() AS c3, countIf((`@bytes` IS NOT NULL)) AS c4, uniqExact(CAST(`@status` AS Nullable(String))) AS c5, sum(toNullable(toFloat64(toFloat64OrNull(CAST(`@bytes` AS Nullable(String)))))) AS c6, avg(toNullable(toFloat64(toFloat64OrNull(CAST(`@bytes` AS Nullable(String)))))) AS c7, if(countIf((toFloat64OrNull(CAST(`@bytes` AS Nullable(String))) IS NOT NULL)) > 0, CAST(min(toFloat64OrNull(CAST(`@bytes` AS Nullable(String)))) AS Dynamic), CAST(min(CAST(`@bytes` AS Nullable(String))) AS Dynamic)) AS c8, if(countIf((toFloat64OrNull(CAST(`@status` AS Nullable(String))) IS NOT NULL)) > 0, CAST(max(toFloat64OrNull(CAST(`@status` AS Nullable(String)))) AS Dynamic), CAST(max(CAST(`@status` AS Nullable(String))) AS Dynamic)) AS c9, arraySlice(arraySort(groupUniqArrayIf(nullIf(`@host`, ''), (nullIf(`@host`, '') IS NOT NULL))), 1, 10000) AS c10, argMinIf(`@status`, `@_time`, (`@status` IS NOT NULL)) AS c11, argMaxIf(`@status`, `@_time`, (`@status` IS NOT NULL)) AS c12, sum(count()) OVER () AS c13 FROM s0 GROUP BY c1, c2),
  s2 AS (SELECT * FROM s1 WHERE (c1 IS NOT NULL) AND (c2 IS NOT NULL))
SELECT c1 AS o1, c2 AS o2, c3 AS o3, c4 AS o4, c5 AS o5, c6 AS o6, c7 AS o7, toJSONString(c8) AS o8, toJSONString(c9) AS o9, c10 AS o10, toJSONString(c11) AS o11, toJSONString(c12) AS o12 FROM s2 ORDER BY (c1 IS NULL) ASC, (toFloat64OrNull(c1) IS NULL) ASC, toFloat64OrNull(c1) ASC, c1 ASC, (c2 IS NULL) ASC, (toFloat64OrNull(c2) IS NULL) ASC, toFloat64OrNull(c2) ASC, c2 ASC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`bytes` AS `@bytes`, doc.`status` AS `@status`, doc.`host` AS `@host`, doc.`index` AS `@index` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT nullIf(`@host`, '') AS c1, nullIf(`@index`, '') AS c2, count() AS c3, countIf((`@bytes` IS NOT NULL)) AS c4, uniqExact(CAST(`@status` AS Nullable(String))) AS c5, sum(toNullable(toFloat64(toFloat64OrNull(CAST(`@bytes` AS Nullable(String)))))) AS c6, avg(toNullable(toFloat64(toFloat64OrNull(CAST(`@bytes` AS Nullable(String)))))) AS c7, if(countIf((toFloat64OrNull(CAST(`@bytes` AS Nullable(String))) IS NOT NULL)) > 0, CAST(min(toFloat64OrNull(CAST(`@bytes` AS Nullable(String)))) AS Dynamic), CAST(min(CAST(`@bytes` AS Nullable(String))) AS Dynamic)) AS c8, if(countIf((toFloat64OrNull(CAST(`@status` AS Nullable(String))) IS NOT NULL)) > 0, CAST(max(toFloat64OrNull(CAST(`@status` AS Nullable(String)))) AS Dynamic), CAST(max(CAST(`@status` AS Nullable(String))) AS Dynamic)) AS c9, arraySlice(arraySort(groupUniqArrayIf(nullIf(`@host`, ''), (nullIf(`@host`, '') IS NOT NULL))), 1, 10000) AS c10, argMinIf(`@status`, `@_time`, (`@status` IS NOT NULL)) AS c11, argMaxIf(`@status`, `@_time`, (`@status` IS NOT NULL)) AS c12, sum(count()) OVER () AS c13 FROM s0 GROUP BY c1, c2),
  s2 AS (SELECT * FROM s1 WHERE (c1 IS NOT NULL) AND (c2 IS NOT NULL))
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s2 LIMIT 10001)) AS n1
