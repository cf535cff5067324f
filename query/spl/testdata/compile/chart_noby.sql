-- * | chart count BY host
-- result: statistics
-- column: host
-- column: count
-- stage: search | *
-- stage: chart | count BY host

-- main:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT nullIf(`@host`, '') AS c1 FROM s0 WHERE (nullIf(`@host`, '') IS NOT NULL)),
  s2 AS (SELECT c1 AS c2, count() AS c3 FROM s1 GROUP BY c2)
SELECT c2 AS o1, c3 AS o2 FROM s2 ORDER BY (c2 IS NULL) ASC, (toFloat64OrNull(c2) IS NULL) ASC, toFloat64OrNull(c2) ASC, c2 ASC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT nullIf(`@host`, '') AS c1 FROM s0 WHERE (nullIf(`@host`, '') IS NOT NULL)),
  s2 AS (SELECT c1 AS c2, count() AS c3 FROM s1 GROUP BY c2)
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s2 LIMIT 10001)) AS n1
