-- checkout | stats count
-- result: statistics
-- column: count
-- stage: search | checkout
-- stage: stats | count

-- main:
WITH
  s0 AS (SELECT doc._time AS `@_time` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') AND ifNull(hasTokenCaseInsensitive(nullIf(doc.`_raw`, ''), 'checkout'), 0)),
  s1 AS (SELECT count() AS c1, count() AS c2 FROM s0)
SELECT c1 AS o1 FROM s1 LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') AND ifNull(hasTokenCaseInsensitive(nullIf(doc.`_raw`, ''), 'checkout'), 0)),
  s1 AS (SELECT count() AS c1, count() AS c2 FROM s0)
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s1 LIMIT 10001)) AS n1
