-- status>=500 | stats avg(bytes) by host
-- result: statistics
-- column: host
-- column: avg(bytes)
-- stage: search | status>=500
-- stage: stats | avg(bytes) by host

-- main:
WITH
  s0 AS (SELECT doc._time AS `@_time`, dynamicElement(doc.`bytes`, 'Int64') AS `@bytes`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') AND ifNull((dynamicElement(doc.`status`, 'Int64') >= 500), 0)),
  s1 AS (SELECT nullIf(`@host`, '') AS c1, avg(toNullable(toFloat64(`@bytes`))) AS c2, sum(count()) OVER () AS c3 FROM s0 GROUP BY c1),
  s2 AS (SELECT * FROM s1 WHERE (c1 IS NOT NULL))
SELECT c1 AS o1, c2 AS o2 FROM s2 ORDER BY (c1 IS NULL) ASC, (toFloat64OrNull(c1) IS NULL) ASC, toFloat64OrNull(c1) ASC, c1 ASC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time`, dynamicElement(doc.`bytes`, 'Int64') AS `@bytes`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') AND ifNull((dynamicElement(doc.`status`, 'Int64') >= 500), 0)),
  s1 AS (SELECT nullIf(`@host`, '') AS c1, avg(toNullable(toFloat64(`@bytes`))) AS c2, sum(count()) OVER () AS c3 FROM s0 GROUP BY c1),
  s2 AS (SELECT * FROM s1 WHERE (c1 IS NOT NULL))
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s2 LIMIT 10001)) AS n1
