\set v random(1, 1000)
SELECT * FROM cal_s200 WHERE v = :v;
