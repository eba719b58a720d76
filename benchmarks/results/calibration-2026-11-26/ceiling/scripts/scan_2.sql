\set v random(1, 1000)
SELECT * FROM cal_s2 WHERE v = :v;
