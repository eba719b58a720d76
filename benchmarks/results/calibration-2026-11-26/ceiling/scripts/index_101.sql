SELECT * FROM cal_ix101 WHERE id = 1;
