\set k 1
SELECT * FROM cal_gone WHERE k = :k;
