-- case url expect=refuse
SELECT * FROM url('http://169.254.169.254/latest/meta-data/', RawBLOB)
-- case url_upper expect=refuse
SELECT * FROM URL('http://example.com', CSV)
-- case url_cluster expect=refuse
SELECT * FROM urlCluster('default', 'http://example.com', CSV)
-- case file expect=refuse
SELECT * FROM file('/etc/passwd', LineAsString)
-- case remote expect=refuse
SELECT * FROM remote('127.0.0.1', _svc.ingest_keys)
-- case remote_secure expect=refuse
SELECT * FROM remoteSecure('127.0.0.1', system.users)
-- case cluster expect=refuse
SELECT * FROM cluster('default', _svc.ingest_keys)
-- case cluster_all_replicas expect=refuse
SELECT * FROM clusterAllReplicas('default', system.query_log)
-- case s3 expect=refuse
SELECT * FROM s3('https://bucket.s3.amazonaws.com/x.csv')
-- case s3_cluster expect=refuse
SELECT * FROM s3Cluster('default', 'https://bucket/x.csv')
-- case gcs expect=refuse
SELECT * FROM gcs('https://storage.googleapis.com/b/x.csv')
-- case azure expect=refuse
SELECT * FROM azureBlobStorage('DefaultEndpointsProtocol=https', 'c', 'x.csv')
-- case hdfs expect=refuse
SELECT * FROM hdfs('hdfs://h:9000/x', 'TSV')
-- case mysql expect=refuse
SELECT * FROM mysql('h:3306', 'db', 't', 'u', 'p')
-- case postgresql expect=refuse
SELECT * FROM postgresql('h:5432', 'db', 't', 'u', 'p')
-- case jdbc expect=refuse
SELECT * FROM jdbc('jdbc:x', 't')
-- case odbc expect=refuse
SELECT * FROM odbc('DSN=x', 't')
-- case mongodb expect=refuse
SELECT * FROM mongodb('h:27017', 'db', 'c', 'u', 'p', 'x String')
-- case redis expect=refuse
SELECT * FROM redis('h:6379', 'k', 'k String, v String')
-- case sqlite expect=refuse
SELECT * FROM sqlite('/tmp/x.db', 't')
-- case executable expect=refuse
SELECT * FROM executable('cat /etc/passwd', TabSeparated, 'x String')
-- case input expect=refuse
SELECT * FROM input('x String')
-- case merge_other expect=refuse
SELECT * FROM merge(REGEXP('.*'), '.*')
-- case merge_own expect=refuse
SELECT * FROM merge('default', '^events')
-- case dictionary expect=refuse
SELECT * FROM dictionary('_svc.d')
-- case view expect=refuse
SELECT * FROM view(SELECT * FROM events)
-- case loop expect=refuse
SELECT * FROM loop(events) LIMIT 1
-- case merge_tree_index expect=refuse
SELECT * FROM mergeTreeIndex('default', 'events')
-- case iceberg expect=refuse
SELECT * FROM icebergS3('https://b/x')
-- case numbers_ok expect=ok
SELECT number FROM numbers(5)
-- case numbers_subquery_svc expect=refuse
SELECT * FROM numbers((SELECT count() FROM _svc.ingest_keys))
-- case generate_random_ok expect=ok
SELECT * FROM generateRandom('a Int64, b String', 1, 10) LIMIT 3
-- case values_ok expect=ok
SELECT * FROM values('a Int64', 1, 2, 3)
-- case format_function_unparsed expect=refuse
SELECT * FROM format(JSONEachRow, '{"a": 1}')
-- case dict_get expect=refuse
SELECT dictGet('_svc.secrets', 'value', toUInt64(1))
-- case dict_get_typed expect=refuse
SELECT dictGetString('d', 'v', 1)
-- case dict_get_case expect=refuse
SELECT DICTGET('d', 'v', 1)
-- case dict_has expect=refuse
SELECT dictHas('d', 1)
-- case join_get expect=refuse
SELECT joinGet('_svc.t', 'v', 1)
-- case has_column expect=refuse
SELECT hasColumnInTable('_svc', 'ingest_keys', 'key')
-- case file_function expect=refuse
SELECT file('/etc/passwd')
-- case catboost expect=refuse
SELECT catboostEvaluate('/model.bin', 1)
-- case addr2line expect=refuse
SELECT addressToLine(1)
-- case apply_dict expect=refuse
SELECT * APPLY(dictGet) FROM numbers(1)
-- case function_in_lambda expect=refuse
SELECT arrayMap(x -> dictGet('d', 'v', x), [1])
-- case function_in_policy_filter_position expect=refuse
SELECT count() FROM events WHERE joinGet('t', 'v', user.id) = 1
-- case function_quoted_name expect=refuse
SELECT `dictGet`('d', 'v', 1)
-- case table_function_in_insert expect=refuse
INSERT INTO events SELECT * FROM s3('https://b/x.json')
-- case insert_function expect=refuse
INSERT INTO FUNCTION file('/tmp/x', CSV) SELECT 1
-- case insert_table_function_keyword expect=refuse
INSERT INTO TABLE FUNCTION url('http://x', CSV, 'a String') SELECT 1
