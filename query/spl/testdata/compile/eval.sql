-- * | eval kb=round(bytes/1024, 2), label=if(status>=400, "bad", "ok"), who=coalesce(user.name, host) . "@" . source, t=strftime(_time, "%Y-%m-%d %H:%M:%S")
-- result: events
-- column: _time
-- column: _raw
-- column: host
-- column: source
-- column: sourcetype
-- column: index
-- column: kb
-- column: label
-- column: who
-- column: t
-- column: (document fields)
-- stage: search | *
-- stage: eval | kb=round(bytes/1024, 2), label=if(status>=400, "bad", "ok"), who=coalesce(user.name, host) . "@" . source, t=strftime(_time, "%Y-%m-%d %H:%M:%S")

-- main:
WITH
  s0 AS (SELECT doc, doc._time AS `@_time`, doc.`bytes` AS `@bytes`, doc.`status` AS `@status`, doc.`user.name` AS `@user.name`, doc.`host` AS `@host`, doc.`source` AS `@source`, doc.`_raw` AS `@_raw`, doc.`sourcetype` AS `@sourcetype`, doc.`index` AS `@index` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT *, (sign(if(1024.0 = 0, NULL, toFloat64OrNull(CAST(`@bytes` AS Nullable(String))) / 1024.0)) * floor(abs(if(1024.0 = 0, NULL, toFloat64OrNull(CAST(`@bytes` AS Nullable(String))) / 1024.0)) * 100.0 + 0.5) / 100.0) AS c1, if(if(toFloat64OrNull(CAST(`@status` AS Nullable(String))) IS NOT NULL AND 400.0 IS NOT NULL, toFloat64OrNull(CAST(`@status` AS Nullable(String))) >= 400.0, CAST(`@status` AS Nullable(String)) >= toString(400.0)), 'bad', 'ok') AS c2, concat(concat(CAST(coalesce(`@user.name`, CAST(nullIf(`@host`, '') AS Dynamic)) AS Nullable(String)), '@'), nullIf(`@source`, '')) AS c3, formatDateTime(`@_time`, '%Y-%m-%d %H:%i:%S', 'UTC') AS c4 FROM s0)
SELECT `@_time` AS o1, nullIf(`@_raw`, '') AS o2, nullIf(`@host`, '') AS o3, nullIf(`@source`, '') AS o4, nullIf(`@sourcetype`, '') AS o5, nullIf(`@index`, '') AS o6, c1 AS o7, c2 AS o8, c3 AS o9, c4 AS o10, toJSONString(doc) AS o11 FROM s1 ORDER BY `@_time` DESC LIMIT 10001

-- stage counts:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`bytes` AS `@bytes`, doc.`status` AS `@status`, doc.`user.name` AS `@user.name`, doc.`host` AS `@host`, doc.`source` AS `@source`, doc.`_raw` AS `@_raw`, doc.`sourcetype` AS `@sourcetype`, doc.`index` AS `@index` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT *, (sign(if(1024.0 = 0, NULL, toFloat64OrNull(CAST(`@bytes` AS Nullable(String))) / 1024.0)) * floor(abs(if(1024.0 = 0, NULL, toFloat64OrNull(CAST(`@bytes` AS Nullable(String))) / 1024.0)) * 100.0 + 0.5) / 100.0) AS c1, if(if(toFloat64OrNull(CAST(`@status` AS Nullable(String))) IS NOT NULL AND 400.0 IS NOT NULL, toFloat64OrNull(CAST(`@status` AS Nullable(String))) >= 400.0, CAST(`@status` AS Nullable(String)) >= toString(400.0)), 'bad', 'ok') AS c2, concat(concat(CAST(coalesce(`@user.name`, CAST(nullIf(`@host`, '') AS Dynamic)) AS Nullable(String)), '@'), nullIf(`@source`, '')) AS c3, formatDateTime(`@_time`, '%Y-%m-%d %H:%i:%S', 'UTC') AS c4 FROM s0)
SELECT (SELECT count() FROM (SELECT 1 FROM s0 LIMIT 10001)) AS n0, (SELECT count() FROM (SELECT 1 FROM s1 LIMIT 10001)) AS n1

-- timeline:
WITH
  s0 AS (SELECT doc._time AS `@_time`, doc.`bytes` AS `@bytes`, doc.`status` AS `@status`, doc.`user.name` AS `@user.name`, doc.`host` AS `@host`, doc.`source` AS `@source`, doc.`_raw` AS `@_raw`, doc.`sourcetype` AS `@sourcetype`, doc.`index` AS `@index` FROM `db`.`logsearch_events` WHERE doc._time >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND doc._time < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC')),
  s1 AS (SELECT *, (sign(if(1024.0 = 0, NULL, toFloat64OrNull(CAST(`@bytes` AS Nullable(String))) / 1024.0)) * floor(abs(if(1024.0 = 0, NULL, toFloat64OrNull(CAST(`@bytes` AS Nullable(String))) / 1024.0)) * 100.0 + 0.5) / 100.0) AS c1, if(if(toFloat64OrNull(CAST(`@status` AS Nullable(String))) IS NOT NULL AND 400.0 IS NOT NULL, toFloat64OrNull(CAST(`@status` AS Nullable(String))) >= 400.0, CAST(`@status` AS Nullable(String)) >= toString(400.0)), 'bad', 'ok') AS c2, concat(concat(CAST(coalesce(`@user.name`, CAST(nullIf(`@host`, '') AS Dynamic)) AS Nullable(String)), '@'), nullIf(`@source`, '')) AS c3, formatDateTime(`@_time`, '%Y-%m-%d %H:%i:%S', 'UTC') AS c4 FROM s0)
SELECT fromUnixTimestamp64Milli(toInt64((intDiv(toUnixTimestamp64Milli(`@_time`), 900000) - (toUnixTimestamp64Milli(`@_time`) % 900000 < 0)) * 900000), 'UTC') AS bucket, count() AS n FROM s1 WHERE `@_time` >= toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') AND `@_time` < toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') GROUP BY bucket ORDER BY bucket WITH FILL FROM toDateTime64('2024-01-01 00:00:00.000', 3, 'UTC') TO toDateTime64('2024-01-02 00:00:00.000', 3, 'UTC') STEP toIntervalMillisecond(900000)
