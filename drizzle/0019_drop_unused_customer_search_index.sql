-- Custom SQL migration file, put your code below! --
-- 0015 indexed decisions by the words of the customer's name, but search matches names through orders.name_tsv
-- (0016) and no query ever read this index: every decision write paid for it, and erased names lingered in it until
-- the next vacuum.
DROP INDEX IF EXISTS decisions_customer_search_idx;
