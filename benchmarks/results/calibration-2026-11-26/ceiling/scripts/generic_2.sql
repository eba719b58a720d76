\set k 1
SELECT * FROM cal_g2 WHERE k = :k;
