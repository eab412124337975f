package com.example.a;

import static org.testng.Assert.assertEquals;

import org.testng.annotations.Test;

/** Same simple name and method names as com.example.b.CalcTest, other outcomes. */
public class CalcTest {
    @Test
    public void add() {
        assertEquals(1 + 2, 3);
    }

    @Test
    public void divide() {
        assertEquals(7 / 2, 4); // fails here, passes in com.example.b
    }
}
