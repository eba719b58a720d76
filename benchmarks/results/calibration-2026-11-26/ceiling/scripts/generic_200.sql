\set k 1
SELECT * FROM cal_g200 WHERE k = :k;
