-- a | search b | search c | search d | search e | search f | search g | search h | search i | search j | search k | search l | search m
-- result: events
-- column: _time
-- column: _raw
-- column: host
-- column: source
-- column: sourcetype
-- column: index
-- column: (document fields)
-- stage: search | a
-- stage: search | b
-- stage: search | c
-- stage: search | d
-- stage: search | e
-- stage: search | f
-- stage: search | g
-- stage: search | h
-- stage: search | i
-- stage: search | j
-- stage: search | k
-- stage: search | l
-- stage: search | m (not measured)

-- main:
WITH
  s0 AS (SELECT doc, doc._time AS `@_time`, doc.`_raw` AS `@_raw`, doc.`host` AS `@host`, doc.`source` AS `@source`, doc.`sourcetype` AS `@sourcetype`, doc.`index` AS `@index` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') AND ifNull(hasTokenCaseInsensitive(nullIf(doc.`_raw`, ''), 'a'), 0)),
  s1 AS (SELECT * FROM s0 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'b'), 0)),
  s2 AS (SELECT * FROM s1 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'c'), 0)),
  s3 AS (SELECT * FROM s2 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'd'), 0)),
  s4 AS (SELECT * FROM s3 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'e'), 0)),
  s5 AS (SELECT * FROM s4 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'f'), 0)),
  s6 AS (SELECT * FROM s5 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'g'), 0)),
  s7 AS (SELECT * FROM s6 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'h'), 0)),
  s8 AS (SELECT * FROM s7 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'i'), 0)),
  s9 AS (SELECT * FROM s8 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'j'), 0)),
  s10 AS (SELECT * FROM s9 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'k'), 0)),
  s11 AS (SELECT * FROM s10 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'l'), 0)),
  s12 AS (SELECT * FROM s11 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'm'), 0))
SELECT `@_time` AS o1, nullIf(`@_raw`, '') AS o2, nullIf(`@host`, '') AS o3, nullIf(`@source`, '') AS o4, nullIf(`@sourcetype`, '') AS o5, nullIf(`@index`, '') AS o6, toJSONString(doc) AS o7 FROM s12 ORDER BY `@_time` DESC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`_raw` AS `@_raw`, doc.`host` AS `@host`, doc.`source` AS `@source`, doc.`sourcetype` AS `@sourcetype`, doc.`index` AS `@index` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') AND ifNull(hasTokenCaseInsensitive(nullIf(doc.`_raw`, ''), 'a'), 0)),
  s1 AS (SELECT * FROM s0 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'b'), 0)),
  s2 AS (SELECT * FROM s1 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'c'), 0)),
  s3 AS (SELECT * FROM s2 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'd'), 0)),
  s4 AS (SELECT * FROM s3 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'e'), 0)),
  s5 AS (SELECT * FROM s4 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'f'), 0)),
  s6 AS (SELECT * FROM s5 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'g'), 0)),
  s7 AS (SELECT * FROM s6 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'h'), 0)),
  s8 AS (SELECT * FROM s7 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'i'), 0)),
  s9 AS (SELECT * FROM s8 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'j'), 0)),
  s10 AS (SELECT * FROM s9 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'k'), 0)),
  s11 AS (SELECT * FROM s10 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'l'), 0))
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s1 LIMIT 10001)) AS n1, (SELECT count() FROM (SELECT 1 FROM s2 LIMIT 10001)) AS n2, (SELECT count() FROM (SELECT 1 FROM s3 LIMIT 10001)) AS n3, (SELECT count() FROM (SELECT 1 FROM s4 LIMIT 10001)) AS n4, (SELECT count() FROM (SELECT 1 FROM s5 LIMIT 10001)) AS n5, (SELECT count() FROM (SELECT 1 FROM s6 LIMIT 10001)) AS n6, (SELECT count() FROM (SELECT 1 FROM s7 LIMIT 10001)) AS n7, (SELECT count() FROM (SELECT 1 FROM s8 LIMIT 10001)) AS n8, (SELECT count() FROM (SELECT 1 FROM s9 LIMIT 10001)) AS n9, (SELECT count() FROM (SELECT 1 FROM s10 LIMIT 10001)) AS n10, (SELECT count() FROM (SELECT 1 FROM s11 LIMIT 10001)) AS n11

-- timeline:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`_raw` AS `@_raw`, doc.`host` AS `@host`, doc.`source` AS `@source`, doc.`sourcetype` AS `@sourcetype`, doc.`index` AS `@index` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') AND ifNull(hasTokenCaseInsensitive(nullIf(doc.`_raw`, ''), 'a'), 0)),
  s1 AS (SELECT * FROM s0 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'b'), 0)),
  s2 AS (SELECT * FROM s1 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'c'), 0)),
  s3 AS (SELECT * FROM s2 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'd'), 0)),
  s4 AS (SELECT * FROM s3 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'e'), 0)),
  s5 AS (SELECT * FROM s4 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'f'), 0)),
  s6 AS (SELECT * FROM s5 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'g'), 0)),
  s7 AS (SELECT * FROM s6 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'h'), 0)),
  s8 AS (SELECT * FROM s7 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'i'), 0)),
  s9 AS (SELECT * FROM s8 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'j'), 0)),
  s10 AS (SELECT * FROM s9 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'k'), 0)),
  s11 AS (SELECT * FROM s10 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'l'), 0)),
  s12 AS (SELECT * FROM s11 WHERE ifNull(hasTokenCaseInsensitive(nullIf(`@_raw`, ''), 'm'), 0))
SELECT fromUnixTimestamp64Milli(toInt64((intDiv(toUnixTimestamp64Milli(`@_time`), 900000) - (toUnixTimestamp64Milli(`@_time`) % 900000 < 0)) * 900000), 'UTC') AS bucket, count() AS n FROM s12 WHERE `@_time` >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND `@_time` < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') GROUP BY bucket ORDER BY bucket WITH FILL FROM toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') TO toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') STEP toIntervalMillisecond(900000)
