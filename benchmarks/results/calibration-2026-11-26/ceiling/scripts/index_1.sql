SELECT * FROM cal_ix1 WHERE id = 1;
