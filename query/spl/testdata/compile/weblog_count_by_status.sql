-- sourcetype=access_combined | stats count by status
-- result: statistics
-- column: status
-- column: count
-- stage: search | sourcetype=access_combined
-- stage: stats | count by status

-- main:
WITH
  s0 AS (SELECT doc._time AS `@_time`, dynamicElement(doc.`status`, 'Int64') AS `@status` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') AND ifNull((lowerUTF8(nullIf(doc.`sourcetype`, '')) = 'access_combined'), 0)),
  s1 AS (SELECT `@status` AS c1, count() AS c2, sum(count()) OVER () AS c3 FROM s0 GROUP BY c1),
  s2 AS (SELECT * FROM s1 WHERE (c1 IS NOT NULL))
SELECT c1 AS o1, c2 AS o2 FROM s2 ORDER BY (c1 IS NULL) ASC, c1 ASC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time`, dynamicElement(doc.`status`, 'Int64') AS `@status` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') AND ifNull((lowerUTF8(nullIf(doc.`sourcetype`, '')) = 'access_combined'), 0)),
  s1 AS (SELECT `@status` AS c1, count() AS c2, sum(count()) OVER () AS c3 FROM s0 GROUP BY c1),
  s2 AS (SELECT * FROM s1 WHERE (c1 IS NOT NULL))
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s2 LIMIT 10001)) AS n1
