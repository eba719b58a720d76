\set k 1
SELECT * FROM cal_g16 WHERE k = :k;
