-- * | dedup host | stats count by host | sort -count | head 3
-- result: statistics
-- column: host
-- column: count
-- stage: search | *
-- stage: dedup | host
-- stage: stats | count by host
-- stage: sort | -count
-- stage: head | 3

-- main:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT * FROM s0 WHERE (nullIf(`@host`, '') IS NOT NULL) ORDER BY `@_time` DESC LIMIT 1 BY nullIf(`@host`, '')),
  s2 AS (SELECT nullIf(`@host`, '') AS c1, count() AS c2, sum(count()) OVER () AS c3 FROM s1 GROUP BY c1),
  s3 AS (SELECT * FROM s2 WHERE (c1 IS NOT NULL)),
  s4 AS (SELECT * FROM s3 ORDER BY (c2 IS NULL) ASC, c2 DESC, (c1 IS NULL) ASC, (toFloat64OrNull(c1) IS NULL) ASC, toFloat64OrNull(c1) ASC, c1 ASC LIMIT 3)
SELECT c1 AS o1, c2 AS o2 FROM s4 ORDER BY (c2 IS NULL) ASC, c2 DESC, (c1 IS NULL) ASC, (toFloat64OrNull(c1) IS NULL) ASC, toFloat64OrNull(c1) ASC, c1 ASC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`host` AS `@host` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT * FROM s0 WHERE (nullIf(`@host`, '') IS NOT NULL) ORDER BY `@_time` DESC LIMIT 1 BY nullIf(`@host`, '')),
  s2 AS (SELECT nullIf(`@host`, '') AS c1, count() AS c2, sum(count()) OVER () AS c3 FROM s1 GROUP BY c1),
  s3 AS (SELECT * FROM s2 WHERE (c1 IS NOT NULL)),
  s4 AS (SELECT * FROM s3 ORDER BY (c2 IS NULL) ASC, c2 DESC, (c1 IS NULL) ASC, (toFloat64OrNull(c1) IS NULL) ASC, toFloat64OrNull(c1) ASC, c1 ASC LIMIT 3)
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s1 LIMIT 10001)) AS n1, (SELECT count() FROM (SELECT 1 FROM s3 LIMIT 10001)) AS n2, (SELECT count() FROM (SELECT 1 FROM s4 LIMIT 10001)) AS n3
