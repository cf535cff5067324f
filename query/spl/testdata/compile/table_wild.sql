-- * | table _time, *
-- result: statistics
-- column: _time
-- column: _raw
-- column: host
-- column: source
-- column: sourcetype
-- column: index
-- column: bytes
-- column: status
-- column: user.id
-- stage: search | *
-- stage: table | _time, *

-- resolved before compiling the rest:
WITH
  s0 AS (SELECT doc FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC'))
SELECT DISTINCT arrayJoin(JSONAllPaths(doc)) AS path FROM s0 ORDER BY path LIMIT 10000

-- main:
WITH
  s0 AS (SELECT doc FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT doc._time AS c1, nullIf(doc.`_raw`, '') AS c2, nullIf(doc.`host`, '') AS c3, nullIf(doc.`source`, '') AS c4, nullIf(doc.`sourcetype`, '') AS c5, nullIf(doc.`index`, '') AS c6, doc.`bytes` AS c7, doc.`status` AS c8, doc.`user.id` AS c9, doc._time AS c10 FROM s0)
SELECT c1 AS o1, c2 AS o2, c3 AS o3, c4 AS o4, c5 AS o5, c6 AS o6, toJSONString(c7) AS o7, toJSONString(c8) AS o8, toJSONString(c9) AS o9 FROM s1 ORDER BY c10 DESC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT doc._time AS c1, nullIf(doc.`_raw`, '') AS c2, nullIf(doc.`host`, '') AS c3, nullIf(doc.`source`, '') AS c4, nullIf(doc.`sourcetype`, '') AS c5, nullIf(doc.`index`, '') AS c6, doc.`bytes` AS c7, doc.`status` AS c8, doc.`user.id` AS c9, doc._time AS c10 FROM s0)
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s1 LIMIT 10001)) AS n1
