-- case array_join_cast
SELECT tag, count() FROM events ARRAY JOIN tags::Array(String) AS tag GROUP BY tag ORDER BY count() DESC
-- case left_array_join
SELECT user.id, item FROM events LEFT ARRAY JOIN items::Array(String) AS item
-- case array_join_two
SELECT k, v FROM events ARRAY JOIN keys::Array(String) AS k, values::Array(String) AS v
-- case array_join_function
SELECT arrayJoin(tags::Array(String)) AS tag, count() FROM events GROUP BY tag
-- case array_join_enumerate
SELECT tag, idx FROM events ARRAY JOIN tags::Array(String) AS tag, arrayEnumerate(tags::Array(String)) AS idx
-- case lambda_map
SELECT arrayMap(x -> upper(x), tags::Array(String)) FROM events LIMIT 5
-- case lambda_filter
SELECT arrayFilter(x -> x LIKE 'a%', tags::Array(String)) FROM events LIMIT 5
-- case lambda_two_args
SELECT arrayMap((x, y) -> concat(x, '=', y), keys::Array(String), values::Array(String)) FROM events LIMIT 5
-- case lambda_exists
SELECT count() FROM events WHERE arrayExists(x -> x = 'vip', tags::Array(String))
-- case lambda_sort
SELECT arraySort(x -> -x, [3, 1, 2])
-- case lambda_reduce
SELECT arrayReduce('sum', [1, 2, 3]), arraySum(x -> x * 2, [1, 2, 3])
-- case array_functions
SELECT has(tags::Array(String), 'vip'), length(tags::Array(String)), arrayDistinct(tags::Array(String)), indexOf(tags::Array(String), 'a') FROM events LIMIT 5
-- case array_literal_index
SELECT [1, 2, 3][2], tags::Array(String)[1] FROM events LIMIT 1
-- case map_literal
SELECT map('a', 1, 'b', 2)['a'], {'x': 1}
-- case tuple_element
SELECT tupleElement((1, 'a'), 2), (1, 'a').1
-- case group_array_sorted
SELECT user.id, arraySort(groupArray(ts::DateTime)) FROM events GROUP BY user.id
-- case sum_map
SELECT sumMap(keys::Array(String), counts::Array(UInt64)) FROM events
-- case array_string_join
SELECT arrayStringConcat(tags::Array(String), ',') FROM events LIMIT 5
-- case range
SELECT range(10), arrayJoin(range(3)) AS i
-- case higher_order_count
SELECT arrayCount(x -> x > 1, [1, 2, 3])
