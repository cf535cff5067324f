-- status=503 | timechart span=1h count
-- result: statistics
-- column: _time
-- column: count
-- stage: search | status=503
-- stage: timechart | span=1h count

-- main:
WITH
  s0 AS (SELECT doc._time AS `@_time` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') AND ifNull((dynamicElement(doc.`status`, 'Int64') = 503), 0)),
  s1 AS (SELECT toStartOfInterval(`@_time`, toIntervalMillisecond(3600000)) AS c1 FROM s0),
  s2 AS (SELECT c1 AS c2, count() AS c3, count() AS c4 FROM s1 GROUP BY c2 ORDER BY c2 WITH FILL FROM toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') TO toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') STEP toIntervalMillisecond(3600000))
SELECT c2 AS o1, c3 AS o2 FROM s2 ORDER BY (c2 IS NULL) ASC, c2 ASC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') AND ifNull((dynamicElement(doc.`status`, 'Int64') = 503), 0)),
  s1 AS (SELECT toStartOfInterval(`@_time`, toIntervalMillisecond(3600000)) AS c1 FROM s0),
  s2 AS (SELECT c1 AS c2, count() AS c3, count() AS c4 FROM s1 GROUP BY c2 ORDER BY c2 WITH FILL FROM toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') TO toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') STEP toIntervalMillisecond(3600000))
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s2 LIMIT 10001)) AS n1
