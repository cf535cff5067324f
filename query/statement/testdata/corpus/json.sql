-- case deep_path
SELECT request.headers.host, count() FROM events GROUP BY 1
-- case typed_subcolumn
SELECT user.id.:Int64 FROM events LIMIT 10
-- case dynamic_type
SELECT dynamicType(user.id), count() FROM events GROUP BY 1
-- case json_all_paths
SELECT DISTINCT arrayJoin(JSONAllPaths(*)) AS path FROM events
-- case to_json_string
SELECT toJSONString(*) FROM events LIMIT 3
-- case json_extract_string_field
SELECT JSONExtractString(raw::String, 'message') FROM events LIMIT 5
-- case json_has
SELECT count() FROM events WHERE JSONHas(raw::String, 'error')
-- case dotted_backtick_key
SELECT `k8s.pod.name`, count() FROM events GROUP BY 1
-- case is_null_path
SELECT countIf(user.email IS NULL), countIf(isNotNull(user.email)) FROM events
-- case cast_nullable
SELECT CAST(amount AS Nullable(Float64)) FROM events
-- case path_comparison_string
SELECT count() FROM events WHERE toString(user.id) = '42'
-- case get_subcolumn
SELECT getSubcolumn(user, 'id') FROM events
-- case logsearch
SELECT _time, _raw FROM logs.logsearch_events ORDER BY _time DESC LIMIT 100
-- case logsearch_host
SELECT host, count() FROM logs.logsearch_events WHERE _time > now() - INTERVAL 1 HOUR GROUP BY host
